import { render } from 'preact'
import { Root } from './app.js'
import './styles.css'

const mount = document.getElementById('app')
if (mount !== null) render(<Root />, mount)
